// Issue 18, finding 2: a report answer written with backpressure. The body is the one copy the
// cache also holds; a large one is handed to the socket a slice at a time (views of that copy,
// never copies), the next slice only once the client has taken the previous ones, so a slow
// reader holds at most a slice or two beyond the shared body. Its bytes stay counted in the answer
// budget until the response ends or its connection closes.
import { finished, Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/** Bodies up to this size go out in one write, as before; larger ones in slices of it. */
export const SLICE_BYTES = 64 * 1024;

function* slices(body: Buffer): Generator<Buffer> {
  for (let at = 0; at < body.length; at += SLICE_BYTES) yield body.subarray(at, at + SLICE_BYTES);
}

/** Sends `body` and calls `release` once the response is over, whether it ended or was cut. */
export function sendAnswer(reply: FastifyReply, body: Buffer, release: () => void): FastifyReply {
  // finished() also calls back for a response whose connection had already closed.
  finished(reply.raw, () => release());
  if (body.length <= SLICE_BYTES) return reply.send(body);
  // The length is known: the same Content-Length as a single write, no chunked encoding.
  reply.header('content-length', String(body.length));
  return reply.send(Readable.from(slices(body), { objectMode: false, highWaterMark: SLICE_BYTES }));
}
