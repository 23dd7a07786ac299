// Who holds a lock or owns a leftover (issue 18, finding 8). A pid alone is not enough after a
// crash: a process killed with SIGKILL stays a zombie until its parent reaps it (forever, under a
// parent that never does, such as some containers' first process), it may still be tearing down
// its memory a second later, and its pid may be given to an unrelated process (in a container the
// server often gets the same low pid at every start). On Linux, /proc/<pid>/stat tells all three
// apart: its state (Z, X), its PF_EXITING flag, and its start time, recorded with the pid.
import fs from 'node:fs';
import { errorFields } from '../errors.js';

/** A process as recorded: its pid and, on Linux, its start time (clock ticks since boot). */
export interface ProcessMark {
  readonly pid: number;
  readonly started?: string;
}

const PF_EXITING = 0x4; // include/linux/sched.h: set as soon as do_exit begins

interface ProcStat {
  readonly state: string;
  readonly flags: number;
  readonly started: string;
}

const hasProc = fs.existsSync('/proc/self/stat');

/** /proc/<pid>/stat's fields, or null when the process is gone, undefined without /proc. */
function procStat(pid: number): ProcStat | null | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch (error) {
    if (errorFields(error).code === 'ENOENT' && hasProc) return null;
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces or ')': read after the last.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [state, flags, started] = [fields[0], fields[6], fields[19]];
  if (state === undefined || flags === undefined || started === undefined) return undefined;
  return { state, flags: Number(flags), started };
}

/** This process, as a lock or a folder name records it. */
export const ownMark: ProcessMark = (() => {
  const stat = procStat(process.pid);
  return stat ? { pid: process.pid, started: stat.started } : { pid: process.pid };
})();

function signalable(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorFields(error).code === 'EPERM';
  }
}

/**
 * True while the recorded process still runs: not gone, not a zombie or exiting, and (when its
 * start time was recorded) not another process that got the same pid since.
 */
export function isRunning(mark: ProcessMark): boolean {
  if (!Number.isSafeInteger(mark.pid) || mark.pid <= 0) return false;
  // Our own pid: ours only if the start time matches (a record without one, where we would have
  // written one, was left by an earlier process that had our pid).
  if (mark.pid === process.pid) return mark.started === ownMark.started;
  const stat = procStat(mark.pid);
  if (stat === null) return false;
  if (stat === undefined) return signalable(mark.pid); // no /proc (macOS): the pid alone
  if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return false;
  if ((stat.flags & PF_EXITING) !== 0) return false;
  return mark.started === undefined || mark.started === stat.started;
}

/** A process as a file or folder name records it: `<pid>-t<start>`, or `<pid>` without /proc. */
export const markName = (mark: ProcessMark): string =>
  mark.started === undefined ? String(mark.pid) : `${mark.pid}-t${mark.started}`;

/** The process markName() wrote, or undefined when `text` is not one. */
export function markOf(text: string): ProcessMark | undefined {
  const match = /^(\d+)(?:-t(\d+))?$/.exec(text);
  if (!match?.[1]) return undefined;
  return { pid: Number(match[1]), ...(match[2] ? { started: match[2] } : {}) };
}

/**
 * Removes the entries of `dir` left by processes that no longer run (killed mid-upload, mid-import
 * or mid-save), whatever their pid now names; `ownerOf` reads the owner from a name (undefined:
 * not such a leftover). Other live processes' entries stay (several instances may share a folder).
 */
export function removeLeftoversOfDeadProcesses(
  dir: string,
  ownerOf: (name: string) => ProcessMark | undefined,
): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (error) {
    if (errorFields(error).code === 'ENOENT') return [];
    throw error;
  }
  const removed: string[] = [];
  for (const name of names) {
    const owner = ownerOf(name);
    if (!owner || isRunning(owner)) continue;
    fs.rmSync(`${dir}/${name}`, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
