// The embedded database's files are the owner's alone (issue 7, finding 12): PGlite writes its
// files with mode 0666 and the folder was 0755, so any local user could read the orders, or edit
// pg_hba.conf. One process-wide umask covers every file PGlite creates, now and later (new tables,
// WAL segments); a pass over an existing DATA_DIR repairs what an earlier version left open.
import fs from 'node:fs';
import path from 'node:path';
import { errorFields } from '../errors.js';

const OWNER_ONLY = 0o077;

/** Sets the umask to 077 and makes dir and everything under it unreadable to group and others. */
export function makePrivate(dir: string): void {
  // Per process, not per thread: PGlite's worker thread inherits it. Every file this process
  // creates afterwards (upload files of the web import too) is private as well.
  process.umask(OWNER_ONLY);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  restrict(dir);
}

/**
 * PGlite's file system layer creates files with an explicit mode 0666 that the umask does not
 * always reach: pass over the tree again once it has written its files, and now and then while
 * it runs (new tables, WAL segments). The folder itself is 0700, so in between no other user can
 * reach them anyway.
 */
export function keepPrivate(dir: string, everyMs = 60_000): () => void {
  restrict(dir);
  const timer = setInterval(() => restrict(dir), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

function restrict(entry: string): void {
  try {
    const stat = fs.lstatSync(entry);
    if (stat.isSymbolicLink()) return; // chmod would change the target, which may be anywhere
    if ((stat.mode & OWNER_ONLY) !== 0) fs.chmodSync(entry, stat.mode & 0o700);
    if (stat.isDirectory()) for (const name of fs.readdirSync(entry)) restrict(path.join(entry, name));
  } catch (error) {
    // Removed meanwhile: a running host renames WAL segments, a stopping one removes its lock.
    if (errorFields(error).code !== 'ENOENT') throw error;
  }
}
