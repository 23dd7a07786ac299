// A client that reads an HTTP answer slowly over a raw socket (issue 18, finding 2): it sends one
// GET, then takes the bytes at `bytesPerS` at most, and closes the connection `ms` after the
// answer began.
import fs from 'node:fs';
import net from 'node:net';

export interface SlowRead {
  /** 0 when no status line arrived (a dropped connection). */
  readonly status: number;
  readonly headers: string;
  /** Content-Length, -1 when absent. */
  readonly contentLength: number;
  /** Bytes read, headers included. */
  readonly received: number;
  /** The start of the body (up to 4 KB), for an error's JSON. */
  readonly bodyStart: string;
}

export interface SlowReadOptions {
  readonly bytesPerS: number;
  readonly ms: number;
  /** Called once the answer's head has arrived (or the connection ended without one); `ms` counts from then. */
  readonly onHead?: () => void;
}

const HEAD_WAIT_MS = 60_000;

export function slowRead(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  options: SlowReadOptions,
): Promise<SlowRead> {
  const url = new URL(baseUrl);
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let begin = performance.now();
    let head = '';
    let headDone = false;
    let bodyStart = '';
    let received = 0;
    const headOnce = () => {
      if (headDone) return;
      headDone = true;
      begin = performance.now(); // the rate counts from the answer's start
      options.onHead?.();
      clearTimeout(timer);
      timer = setTimeout(finish, options.ms); // `ms` of reading once the answer has begun
    };
    function finish() {
      headOnce();
      clearTimeout(timer);
      socket.destroy();
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const contentLength = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? -1);
      resolve({ status, headers: head, contentLength, received, bodyStart });
    }
    // The head may wait for a computation's turn first.
    let timer = setTimeout(() => finish(), options.ms + HEAD_WAIT_MS);
    socket.on('connect', () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\n${lines.join('')}Connection: close\r\n\r\n`),
    );
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (!headDone) {
        head += chunk.toString('utf8');
        const end = head.indexOf('\r\n\r\n');
        if (end !== -1) {
          bodyStart = head.slice(end + 4, end + 4 + 4096);
          head = head.slice(0, end);
          headOnce();
        }
      } else if (bodyStart.length < 4096) bodyStart += chunk.toString('utf8', 0, 4096 - bodyStart.length);
      const ahead = received - (options.bytesPerS * (performance.now() - begin)) / 1000;
      if (ahead > 0) {
        socket.pause();
        setTimeout(() => socket.resume(), (ahead / options.bytesPerS) * 1000);
      }
    });
    socket.on('end', finish);
    socket.on('error', finish);
  });
}

/** A process's resident memory in MB, from /proc. */
export function rssMbOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}
