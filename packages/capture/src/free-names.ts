/**
 * Names for the fields of one object as they are added: a name already taken gets a numbered variant
 * (`Email (2)`, `a_b_2`). The last number given per name is remembered, so n repeats of one name
 * cost O(n) in all, not the O(n²) of counting up from 2 each time. The object only grows, and each
 * name handed out is assigned by the caller before the next is asked for.
 */
export class FreeNames {
  readonly #nextSuffix = new Map<string, number>();

  constructor(
    private readonly taken: Readonly<Record<string, unknown>>,
    private readonly variant: (name: string, suffix: number) => string,
  ) {}

  of(name: string): string {
    if (!Object.hasOwn(this.taken, name)) return name;
    let suffix = this.#nextSuffix.get(name) ?? 2;
    while (Object.hasOwn(this.taken, this.variant(name, suffix))) suffix++;
    this.#nextSuffix.set(name, suffix + 1);
    return this.variant(name, suffix);
  }
}
