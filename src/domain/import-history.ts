// The organization's past file imports (issue 30, item 9), for the Boutiques page: what import_jobs
// (migration 005) already keeps of each — file, origin, state, counts, dates. Connector passes are
// listed by the connected stores' table instead (origin `connector`), so they are left out here.
import type { Queryable } from '../db/database.js';

export interface PastImport {
  readonly id: string;
  readonly origin: string;
  readonly fileName: string | null;
  readonly state: string;
  readonly imported: number;
  readonly updated: number;
  readonly rejected: number;
  readonly createdAt: Date;
}

/** The organization's latest file imports, newest first (bounded: the page shows a few). */
export async function recentImports(
  db: Queryable,
  organizationId: string,
  limit = 10,
): Promise<PastImport[]> {
  const rows = await db.query<Record<string, unknown>>(
    `SELECT id, origin, file_name, state, imported, updated, rejected, created_at FROM import_jobs
     WHERE organization_id = $1 AND origin <> 'connector' ORDER BY created_at DESC LIMIT $2`,
    [organizationId, Math.max(1, Math.min(limit, 50))],
  );
  return rows.map((row) => ({
    id: String(row.id),
    origin: String(row.origin),
    fileName: row.file_name === null || row.file_name === undefined ? null : String(row.file_name),
    state: String(row.state),
    imported: Number(row.imported ?? 0),
    updated: Number(row.updated ?? 0),
    rejected: Number(row.rejected ?? 0),
    createdAt: row.created_at instanceof Date ? row.created_at : new Date(String(row.created_at)),
  }));
}
