/**
 * Tests and benchmarks on the shared Ceph RGW (one memstore OSD of 512 MiB for everyone): what a test
 * put under its agent's prefix is removed after it, so the store does not fill up run after run.
 */
export { removeObjects } from '../stores/postgres/agent-removal.ts';
