// A new Postgres backend gives memory back to the kernel eagerly: its malloc (glibc's) serves a
// chunk of 128 KiB or more with mmap and unmaps it when freed, and trims the top of its heap past
// 256 KiB. A statement that builds a result or reads a parameter of a few hundred KB (a page of the
// event log as JSON, a chunk of a report's findings) then faults every page of it in again, each
// time: about 300 page faults for a page of GET /events, 4–5 ms on top of the statement's 2 ms on a
// small VM (bench/notes/2026-11-28-backend-memory.md). Once a chunk of some size has been freed, glibc
// raises both bounds to it (and twice it) for the rest of the process (mallopt(3), "dynamic mmap
// threshold"): one such chunk, allocated and freed by the first statement on each new connection,
// keeps the backend's working memory mapped from then on. With another allocator (musl's) it is merely
// one more statement.
import type pg from "pg";

/**
 * The chunk: 2 MiB, so that glibc keeps chunks up to 2 MiB on its heap and up to 4 MiB free at its
 * top. The working memory of a statement whose result is 330 KB is more than 2 MiB: with a 1 MiB
 * chunk such a statement faulted more pages than with none
 * (bench/notes/2026-11-28-backend-memory.md). Faulting the chunk in costs a new connection about
 * 20 ms on a small VM, once; 2 KiB repeated 1,024 times, as repeating one character two million
 * times is slower.
 */
const ALLOCATE_AND_FREE = "SELECT length(repeat(repeat(' ', 2048), 1024))";

/** A pool's `onConnect`: run on each new connection before it is lent out (a failure fails that checkout). */
export async function keepBackendMemoryMapped(client: pg.ClientBase): Promise<void> {
  await client.query(ALLOCATE_AND_FREE);
}
