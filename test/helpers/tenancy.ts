// Checks that a SQL statement filters every tenant table it reads or writes by organization_id
// (what distributing the schema by organization on Citus needs; see docs/deployment.md).

/** Tables that belong to one organization; organizations itself is the tenant. */
export const TENANT_TABLES = new Set([
  'orders',
  'order_lines',
  'stores',
  'customer_first_orders',
  'api_keys',
  'import_staging',
  'import_customers',
  'import_jobs',
]);

export function tenantTablesWithoutFilter(sql: string): string[] {
  const missing: string[] = [];
  const text = sql.replace(/\s+/g, ' ');
  const references = /\b(FROM|JOIN|INTO|UPDATE|COPY)\s+([a-z_]+)(?:\s+(?:AS\s+)?([a-z]+)\b)?/gi;
  for (const match of text.matchAll(references)) {
    const table = (match[2] ?? '').toLowerCase();
    if (!TENANT_TABLES.has(table)) continue;
    const keyword = (match[1] ?? '').toUpperCase();
    let alias = (match[3] ?? '').toLowerCase();
    if (
      [
        'on',
        'where',
        'set',
        'select',
        'group',
        'order',
        'limit',
        'using',
        'returning',
        'values',
        'as',
      ].includes(alias)
    )
      alias = '';
    // An INSERT or a COPY … FROM STDIN writes organization_id as a column of the row; other
    // statements must filter by it.
    const filtered =
      keyword === 'INTO' || keyword === 'COPY'
        ? /\(\s*organization_id\b/i.test(
            text.slice((match.index ?? 0) + match[0].length - (match[3]?.length ?? 0)),
          )
        : alias
          ? new RegExp(`\\b${alias}\\.organization_id\\s*=`, 'i').test(text)
          : /\borganization_id\s*=/i.test(text);
    if (!filtered) missing.push(alias ? `${table} ${alias}` : table);
  }
  return missing;
}
