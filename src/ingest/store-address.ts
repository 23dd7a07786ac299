// The store address rule lives with the database (src/db/store-address.ts), whose migration 014
// applies it to the addresses stored before it; the import and the domain read it from here.
export * from '../db/store-address.js';
