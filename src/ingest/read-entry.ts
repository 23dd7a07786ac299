// What the order readers yield (src/ingest/read-orders.ts, csv-lines.ts), one entry an order.
import type { FieldError } from './field-checks.js';

/**
 * A record, or an error on a line. A `fatal` error refuses the whole file, --skip-invalid or not:
 * the file is not UTF-8 (issue 18, finding 3), or its header cannot be read; nothing after it is read.
 */
export type ReadEntry =
  | {
      line: number;
      record: Record<string, unknown>;
      /** L8: the file's line of each of the order's lines, which their errors name. */
      rows?: readonly number[];
      /** L8: what rejects the order besides its fields (a row contradicting its first one). */
      problems?: readonly RowProblem[];
    }
  | { line: number; error: FieldError; fatal?: true };

/** An error found on a line of its own (a CSV row of an order, L8). */
export interface RowProblem extends FieldError {
  line: number;
}
