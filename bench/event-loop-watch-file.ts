// Where a server watched by bench/event-loop-watch.ts writes its figures, for the bench to read.
import os from 'node:os';
import path from 'node:path';

export const watchFile = (pid: number): string => path.join(os.tmpdir(), `event-loop-watch-${pid}.txt`);
