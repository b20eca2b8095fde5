// A new Postgres backend gives memory back to the kernel eagerly: its malloc (glibc's) serves a
// chunk of 128 KiB or more with mmap and unmaps it when freed, and trims the top of its heap past
// 256 KiB. A statement that builds a result or reads a parameter of a few hundred KiB (a page of
// the event log as JSON, a chunk of a report's findings) then faults every page of it in again,
// each time: about 300 page faults, 4–5 ms of a 2 ms statement, for a page of GET /events on a VM
// (bench/README.md). Once a chunk of some size has been freed, glibc raises both bounds to it (and
// twice it) for the rest of the process (mallopt(3), "dynamic mmap threshold"): one such chunk,
// allocated and freed by the first statement on each new connection, keeps the backend's working
// memory mapped from then on. Elsewhere (another allocator) the statement is merely a cheap one.
import type pg from "pg";

/** Bytes of the chunk: glibc keeps chunks up to this size on its heap, and up to twice it free at its top. */
const CHUNK_BYTES = 4 * 1024 * 1024;

/** A text value of CHUNK_BYTES made (one allocation, in the statement's memory) and dropped. */
const ALLOCATE_AND_FREE = `SELECT length(repeat(' ', ${CHUNK_BYTES}))`;

/** A pool's `onConnect`: run on each new connection before it is lent out (a failure fails that checkout). */
export async function keepBackendMemoryMapped(client: pg.ClientBase): Promise<void> {
  await client.query(ALLOCATE_AND_FREE);
}
