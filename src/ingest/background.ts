// The browser's imports run in the background (issue 7, finding 7): the upload is spooled to a
// private file, a queued job row is written, the page answers at once with the job's address, and
// this runner imports the file with the same core function as the CLI, then removes it. One
// import at a time per process, a bounded queue (past it: SERVICE_BUSY); queued jobs keep beating
// so that no other process takes them for killed ones.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import {
  markName,
  markOf,
  ownMark,
  removeLeftoversOfDeadProcesses,
  type ProcessMark,
} from '../db/process-identity.js';
import { importOrderFile } from './import.js';
import { FAILED, HEARTBEAT_MS, INTERRUPTED, createJob, finishJob } from './jobs.js';

const SPOOL_PREFIX = 'sales-metrics-upload-';

interface Queued {
  readonly jobId: string;
  readonly organizationId: string;
  readonly file: string;
  readonly fileName: string;
  readonly skipInvalid: boolean;
}

export class BackgroundImports {
  private readonly queue: Queued[] = [];
  /** Queued or running job ids, with their organization. */
  private readonly waiting = new Map<string, string>();
  private running: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  /**
   * This process's spool folder (mode 0700), named after its pid and start time so that leftovers
   * can be told apart, even once the pid is another process's (finding 8).
   */
  readonly spoolDir: string;

  constructor(
    private readonly db: Database,
    private readonly onError: (error: unknown, jobId: string) => void,
    private readonly maxQueued = 20,
  ) {
    removeLeftoverSpools();
    this.spoolDir = fs.mkdtempSync(path.join(os.tmpdir(), `${SPOOL_PREFIX}${markName(ownMark)}-`));
    this.timer = setInterval(() => void this.beatWaiting(), HEARTBEAT_MS);
    this.timer.unref();
  }

  /** A path in the spool folder for an upload (the caller writes it with mode 0600). */
  spoolPath(): string {
    return path.join(this.spoolDir, crypto.randomUUID());
  }

  /** Queues the import of a spooled file; returns the job id. The file is removed when done. */
  async submit(request: Omit<Queued, 'jobId'>): Promise<string> {
    if (this.queue.length >= this.maxQueued) {
      await fs.promises.rm(request.file, { force: true });
      throw new AppError(
        'SERVICE_BUSY',
        `Trop d’imports en attente (${this.maxQueued}) : réessayez dans quelques minutes.`,
      );
    }
    const jobId = crypto.randomUUID();
    await createJob(this.db, {
      id: jobId,
      organizationId: request.organizationId,
      origin: 'web',
      fileName: request.fileName,
      state: 'queued',
    });
    this.queue.push({ ...request, jobId });
    this.waiting.set(jobId, request.organizationId);
    this.running ??= this.drain().finally(() => (this.running = undefined));
    return jobId;
  }

  private async drain(): Promise<void> {
    for (let next = this.queue.shift(); next; next = this.queue.shift()) {
      try {
        await importOrderFile(this.db, next.organizationId, next.file, {
          jobId: next.jobId,
          skipInvalid: next.skipInvalid,
        });
      } catch (error) {
        this.onError(error, next.jobId);
        await finishJob(this.db, next.organizationId, next.jobId, { state: 'failed', message: FAILED }).catch(
          () => undefined,
        );
      } finally {
        this.waiting.delete(next.jobId);
        await fs.promises.rm(next.file, { force: true });
      }
    }
  }

  private async beatWaiting(): Promise<void> {
    if (this.waiting.size === 0) return;
    await this.db
      .query("UPDATE import_jobs SET heartbeat_at = now() WHERE id = ANY($1::uuid[]) AND state = 'queued'", [
        [...this.waiting],
      ])
      .catch(() => undefined);
  }

  /** Waits for the import in progress; the queued ones are failed as interrupted. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    for (const left of this.queue.splice(0)) {
      await finishJob(this.db, left.organizationId, left.jobId, {
        state: 'failed',
        message: INTERRUPTED,
      }).catch(() => undefined);
      await fs.promises.rm(left.file, { force: true });
    }
    await this.running?.catch(() => undefined);
    fs.rmSync(this.spoolDir, { recursive: true, force: true });
  }
}

/** The process a spool folder's name records: `<pid>-t<start>-XXXXXX`, or `<pid>-XXXXXX` before. */
function ownerOf(name: string): ProcessMark | undefined {
  if (!name.startsWith(SPOOL_PREFIX)) return undefined;
  return markOf(name.slice(SPOOL_PREFIX.length, name.lastIndexOf('-')));
}

/**
 * Spool folders of processes that no longer run (killed mid-upload or mid-import), whatever their
 * pid now names; other instances' folders stay (several may share /tmp).
 */
function removeLeftoverSpools(): void {
  removeLeftoversOfDeadProcesses(os.tmpdir(), ownerOf);
}
