import { randomUUID } from 'node:crypto'
import { LeaseStore, type LeaseStoreOptions } from '../../src/core/lease-store'
import { resetProject } from './emulator'

/** A project id of its own per test file: files run in parallel, resets never cross. */
export function uniqueProject(prefix = 'test'): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`.toLowerCase()
}

export function emulatorHost(): string {
  const h = process.env.FIRESTORE_EMULATOR_HOST
  if (!h) throw new Error('FIRESTORE_EMULATOR_HOST is not set: run the tests through vitest (npm test)')
  return h
}

export function makeStore(projectId: string, opts: LeaseStoreOptions = {}): LeaseStore {
  return new LeaseStore({ projectId, ...opts })
}

export async function reset(projectId: string): Promise<void> {
  await resetProject(emulatorHost(), projectId)
}
