import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isCI } from '@lead-capture/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { fetchEmbeddedOpenApi, type OpenApiDocument, REPO_ROOT } from './openapi-document.js';

/**
 * The contract's endpoint tables walked against the OpenAPI document the routes generate: every
 * `| METHOD | /path | ... |` row of ../shared/spec/lead-capture-api.md exists as an operation, with a
 * success response and every status code the contract states for it. The spec is read at test
 * time from the `shared/` folder beside the checkout (CI clones it there).
 */
const SPEC_PATH = join(REPO_ROOT, '..', 'shared', 'spec', 'lead-capture-api.md');
const spec = readSpec();

function readSpec(): string | null {
  try {
    return readFileSync(SPEC_PATH, 'utf8');
  } catch {
    const message = `The API contract is not at ${SPEC_PATH} (clone the shared/ folder beside the repository)`;
    if (isCI) throw new Error(message);
    console.warn(`[tests] ${message}: skipping the contract walk`);
    return null;
  }
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const ROW = new RegExp(`^\\|\\s*(${METHODS.join('|')})\\s*\\|\\s*(/[^\\s|]*)\\s*\\|(.*)\\|\\s*$`);
const ANY_METHOD_ROW = new RegExp(`^\\|\\s*(${METHODS.join('|')})\\s*\\|`);

interface ContractRow {
  method: string;
  /** As the contract writes it: `/api/leads/<lead_id>`. */
  path: string;
  section: string;
  /** Each status code the contract states for the row, with where it says so. */
  statuses: Map<number, string>;
}

/**
 * The endpoint rows, with the codes stated in the row's Response cell ("Status 201") and in an
 * "Errors:" note of the row's section ("404 for an invalid token; ...").
 */
function parseEndpointRows(markdown: string): ContractRow[] {
  const rows: ContractRow[] = [];
  let section = '';
  let sectionRows: ContractRow[] = [];
  for (const line of markdown.split('\n')) {
    const heading = /^#{2,}\s+(.*)$/.exec(line);
    if (heading) {
      section = heading[1]!.trim();
      sectionRows = [];
      continue;
    }
    const row = ROW.exec(line);
    if (row) {
      const cells = row[3]!.split('|');
      const response = cells[cells.length - 1]!;
      const parsed: ContractRow = { method: row[1]!, path: row[2]!, section, statuses: new Map() };
      for (const [, code] of response.matchAll(/\bStatus (\d{3})\b/g)) {
        parsed.statuses.set(Number(code), `its Response cell: "${response.trim()}"`);
      }
      rows.push(parsed);
      sectionRows.push(parsed);
      continue;
    }
    const errors = /^-\s+Errors:\s+(.*)$/.exec(line);
    if (errors) {
      for (const [, code] of errors[1]!.matchAll(/\b([1-5]\d\d) (?:for|when)\b/g)) {
        for (const target of sectionRows) target.statuses.set(Number(code), `"${section}": ${line.trim()}`);
      }
    }
  }
  return rows;
}

/**
 * Statements of the contract that give a status code to a whole class of endpoints. Each sentence
 * must still be in the contract, word for word: when it changes, the rule here is revisited.
 */
const isPublic = (row: ContractRow) => row.section === 'Inbound webhook' || row.path === '/api/auth/login';
const RULES: Array<{ sentence: string; status: number; appliesTo: (row: ContractRow) => boolean }> = [
  {
    sentence: 'Missing or invalid authentication is answered with 401.',
    status: 401,
    // "All endpoints except the inbound webhook and login require authentication"
    appliesTo: (row) => !isPublic(row),
  },
  {
    sentence: 'A read-only key that attempts a write is answered with 403.',
    status: 403,
    appliesTo: (row) => !isPublic(row) && row.method !== 'GET',
  },
  {
    // The Limits table: 100 requests per minute per IP on "All API requests" and the webhook endpoints.
    sentence: 'Exceeding the rate limit yields 429.',
    status: 429,
    appliesTo: () => true,
  },
];
const AUTHENTICATION_EXCEPTIONS = 'All endpoints except the inbound webhook and login require authentication';

/**
 * Codes the contract states that a route does not declare, and that could not be declared without
 * changing behaviour. Keyed `METHOD /contract/path`; each says why. An entry that is no longer
 * needed fails the test, so the list only shrinks.
 */
const KNOWN_EXCEPTIONS: Record<string, { statuses: number[]; why: string }> = {};

/** `/api/leads/<lead_id>` and `/api/leads/{id}` both become `/api/leads/{}`. */
function shape(path: string): string {
  return path.replace(/<[^>]+>/g, '{}').replace(/\{[^}*]+\}/g, '{}');
}

type Operation = { responses?: Record<string, unknown> };

/**
 * The document's operation for a contract row: the same path shape, or a wildcard path
 * (`/api/webhooks/{*}`, fastify's `*`) whose prefix matches.
 */
function findOperation(
  document: OpenApiDocument,
  row: ContractRow,
): { path: string; operation?: Operation } | null {
  const wanted = shape(row.path);
  const method = row.method.toLowerCase();
  for (const [path, item] of Object.entries(document.paths)) {
    if (shape(path) === wanted) return { path, operation: item[method] as Operation | undefined };
  }
  for (const [path, item] of Object.entries(document.paths)) {
    if (path.endsWith('/{*}') && wanted.startsWith(path.slice(0, -'{*}'.length))) {
      return { path, operation: item[method] as Operation | undefined };
    }
  }
  return null;
}

describe.runIf(spec !== null)('the API against its contract (../shared/spec/lead-capture-api.md)', () => {
  const markdown = spec ?? '';
  const rows = parseEndpointRows(markdown);
  let document: OpenApiDocument;

  beforeAll(async () => {
    document = await fetchEmbeddedOpenApi();
  });

  it('reads every endpoint row of the contract', () => {
    const tableLines = markdown.split('\n').filter((line) => ANY_METHOD_ROW.test(line));
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.map((row) => `${row.method} ${row.path}`)).toHaveLength(tableLines.length);
    expect(markdown, 'the contract still names the public endpoints').toContain(AUTHENTICATION_EXCEPTIONS);
    for (const { sentence } of RULES)
      expect(markdown, 'a rule of this test is the contract’s').toContain(sentence);
  });

  it.each(rows.map((row) => [`${row.method} ${row.path}`, row] as const))(
    '%s exists with a success response and the status codes the contract states',
    (name, row) => {
      const found = findOperation(document, row);
      expect(found, `${name} (from "${row.section}") has no path in the OpenAPI document`).not.toBeNull();
      expect(found!.operation, `${name}: ${found!.path} has no ${row.method} operation`).toBeDefined();
      const declared = new Set(Object.keys(found!.operation!.responses ?? {}).map(Number));
      expect(
        [...declared].some((status) => status >= 200 && status < 300),
        `${name} declares no success (2xx) response`,
      ).toBe(true);

      const stated = new Map(row.statuses);
      for (const rule of RULES) {
        if (rule.appliesTo(row)) stated.set(rule.status, `the contract: "${rule.sentence}"`);
      }
      const exception = KNOWN_EXCEPTIONS[name];
      const missing = [...stated]
        .filter(([status]) => !declared.has(status))
        .filter(([status]) => !exception?.statuses.includes(status))
        .map(([status, where]) => `${status} (stated by ${where})`);
      expect(missing, `${name} (${found!.path}) does not declare every status the contract states`).toEqual(
        [],
      );
      for (const status of exception?.statuses ?? []) {
        expect(declared.has(status), `${name} now declares ${status}: remove it from KNOWN_EXCEPTIONS`).toBe(
          false,
        );
      }
    },
  );

  it('lists no exception for a row the contract does not have', () => {
    const names = new Set(rows.map((row) => `${row.method} ${row.path}`));
    expect(Object.keys(KNOWN_EXCEPTIONS).filter((name) => !names.has(name))).toEqual([]);
  });
});
