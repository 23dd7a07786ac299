// Issue 18, finding 2: a report answer written with backpressure. The body is the one copy the
// cache also holds; a large one is handed to the socket a slice at a time (views of that copy,
// never copies), the next slice only once the client has taken the previous ones, so a slow
// reader holds at most a slice or two beyond the shared body. Its bytes stay counted in the answer
// budget until the response ends or its connection closes.
// Issue 29, item 2: writing tens of megabytes to sockets is work too (a sixth of the busy CPU
// under one organization's burst of 100,000-row answers): the pieces go out in the organization's
// turns (src/limits/time-slice.ts), at most SHARED_TURN_BYTES a turn while another organization
// waits, so that one organization's answers being written do not lengthen every turn of the
// event loop that another's request waits for.
import { finished, Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { othersAtWork, workUnderWay } from '../limits/organization-turns.js';
import { TimeSlices } from '../limits/time-slice.js';

/** Bodies up to this size go out in one write, as before; larger ones in slices of it. */
export const SLICE_BYTES = 64 * 1024;

/**
 * Bytes handed to the socket per turn while another organization has work under way: the cost
 * of a write is paid later in the turn (the kernel's copy, on loopback its delivery too, about
 * 3 ms a megabyte on our machine), not while the pieces are handed over, so a time slice would
 * let tens of megabytes through at once.
 */
export const SHARED_TURN_BYTES = 256 * 1024;

/** The body's pieces, in the organization's turns (issue 29, item 2). */
export async function* answerPieces(body: Buffer, organizationId: string): AsyncGenerator<Buffer> {
  const turns = new TimeSlices(organizationId);
  let handed = 0;
  for (let at = 0; at < body.length; at += SLICE_BYTES) {
    yield body.subarray(at, at + SLICE_BYTES);
    handed += SLICE_BYTES;
    if (turns.due() || (handed >= SHARED_TURN_BYTES && othersAtWork(organizationId))) {
      await turns.next();
      handed = 0;
    }
  }
}

/** Sends the organization's `body` and calls `release` once the response is over, whether it ended or was cut. */
export function sendAnswer(
  reply: FastifyReply,
  organizationId: string,
  body: Buffer,
  release: () => void,
): FastifyReply {
  if (body.length <= SLICE_BYTES) {
    // finished() also calls back for a response whose connection had already closed.
    finished(reply.raw, () => release());
    return reply.send(body);
  }
  const ended = workUnderWay(organizationId);
  finished(reply.raw, () => (ended(), release()));
  // The length is known: the same Content-Length as a single write, no chunked encoding.
  reply.header('content-length', String(body.length));
  return reply.send(
    Readable.from(answerPieces(body, organizationId), { objectMode: false, highWaterMark: SLICE_BYTES }),
  );
}
