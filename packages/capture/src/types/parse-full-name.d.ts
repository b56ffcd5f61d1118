declare module 'parse-full-name' {
  export interface ParsedFullName {
    title: string;
    first: string;
    middle: string;
    last: string;
    nick: string;
    suffix: string;
    error: string[];
  }
  /** fixCase 0 keeps the case as typed; stopOnError 0 collects problems in `error` instead of stopping. */
  export function parseFullName(
    name: string,
    partToReturn: 'all',
    fixCase?: 0 | 1 | -1,
    stopOnError?: 0 | 1,
    useLongLists?: 0 | 1,
  ): ParsedFullName;
}
