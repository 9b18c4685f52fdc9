import { afterAll, describe, expect, test } from 'vitest'
import { ValidationError } from '../../src/core/errors'
import { MAX_PLAIN_ID, resourceDocId, slotResource } from '../../src/core/resource-id'
import { makeStore, uniqueProject } from '../support/firestore'
import { collectionIds, readLeaseDoc } from '../support/lease-helpers'

/** Firestore's rules for a document id. */
function assertValidFirestoreId(id: string): void {
  expect(id.length).toBeGreaterThan(0)
  expect(id).not.toContain('/')
  expect(id).not.toBe('.')
  expect(id).not.toBe('..')
  expect(id).not.toMatch(/^__.*__$/)
  expect(Buffer.byteLength(id, 'utf8')).toBeLessThanOrEqual(1500)
}

const KB1 = 'k'.repeat(1024)
const KB1_OTHER = 'k'.repeat(1023) + 'l'
// 5 KB of UTF-8 (1707 three-byte characters), far beyond Firestore's 1,500-byte id limit.
const KB5 = '€'.repeat(1707)
const KB5_OTHER = '€'.repeat(1706) + '£'
const MAX_ASCII = 'a'.repeat(4096)
// The longest accepted resource in bytes: 4096 characters of three bytes each (12 KB).
const MAX_MULTIBYTE = '€'.repeat(4096)

const TRICKY = [
  'owner/repo',
  'owner/repo/sub/dir',
  '/',
  '//',
  '.',
  '..',
  '...',
  '__x__',
  '__',
  '___',
  '_',
  '%',
  '%25',
  '%2F',
  '~',
  '~h~' + '0'.repeat(64),
  'a b',
  'a+b',
  'a#slot-1',
  'env:staging',
  'ÄÖÜ',
  'ß',
  '日本語のリソース',
  '🚀 deploy',
  'e\u0301',
  '\u00e9',
  'tab\there',
  'new\nline',
  '\u0000',
  'UPPER',
  'upper',
  'a-b',
  'a_b',
  'a.b',
  KB1,
  KB1_OTHER,
  KB5,
  KB5_OTHER,
  MAX_ASCII,
  MAX_MULTIBYTE,
  'x'.repeat(MAX_PLAIN_ID),
  'x'.repeat(MAX_PLAIN_ID + 1),
  '/'.repeat(133),
  '/'.repeat(134)
]

describe('resourceDocId', () => {
  test('every id is valid for Firestore', () => {
    for (const r of TRICKY) assertValidFirestoreId(resourceDocId(r))
  })

  test('distinct resources get distinct ids (and the same resource the same id)', () => {
    const ids = TRICKY.map(resourceDocId)
    expect(new Set(ids).size).toBe(TRICKY.length)
    for (const r of TRICKY) expect(resourceDocId(r)).toBe(resourceDocId(r))
  })

  test('short names stay readable; long names are hashed', () => {
    expect(resourceDocId('owner-repo')).toBe('owner-repo')
    expect(resourceDocId('owner/repo')).toBe('owner%2Frepo')
    expect(resourceDocId('x'.repeat(MAX_PLAIN_ID))).toBe('x'.repeat(MAX_PLAIN_ID))
    expect(resourceDocId(KB1)).toMatch(/^~h~[0-9a-f]{64}$/)
    expect(resourceDocId(KB5)).toMatch(/^~h~[0-9a-f]{64}$/)
  })

  test('a resource spelled like a hashed id does not collide with the name it hashes', () => {
    const hashed = resourceDocId(KB1)
    expect(resourceDocId(hashed)).not.toBe(hashed)
  })

  test.each(['', ' ', '\t\n'])('the empty resource %j is refused', (r) => {
    expect(() => resourceDocId(r)).toThrow(ValidationError)
    expect(() => resourceDocId(r)).toThrow(/^resource: must be a non-empty string/)
  })

  test('a resource over 4096 characters is refused with a clear message', () => {
    expect(() => resourceDocId('a'.repeat(4097))).toThrow(/^resource: 4097 characters is too long; keep it under 4096/)
    expect(() => resourceDocId('a'.repeat(5 * 1024))).toThrow(ValidationError)
  })

  test('slots are resources of their own', () => {
    expect(resourceDocId(slotResource('o/r', 0))).not.toBe(resourceDocId(slotResource('o/r', 1)))
    expect(resourceDocId(slotResource('o/r', 0))).not.toBe(resourceDocId('o/r'))
  })
})

describe('in the emulator', () => {
  const project = uniqueProject('resid')
  const store = makeStore(project)
  afterAll(() => store.close())

  test('a lease on every tricky resource can be written and read back with its resource preserved', async () => {
    for (const resource of TRICKY) {
      const r = await store.acquire(resource, 'owner-a', { ttlMs: 60_000 })
      expect(r.acquired, resource.slice(0, 40)).toBe(true)
      const doc = await readLeaseDoc(store, resource)
      expect(doc.exists).toBe(true)
      expect(doc.data!.resource).toBe(resource)
      const s = await store.status(resource)
      expect(s).toMatchObject({ resource, exists: true, owner: 'owner-a', token: 1, live: true })
      // A second owner finds exactly that document busy (the id round-trips to the same document).
      const b = await store.acquire(resource, 'owner-b', { ttlMs: 60_000 })
      expect(b).toMatchObject({ acquired: false, holder: 'owner-a', token: 1 })
    }
    // One document per resource: no two resources shared one.
    const ids = await collectionIds(store.db, 'leases')
    expect(ids.sort()).toEqual(TRICKY.map(resourceDocId).sort())
  })

  test('the gate accepts the same resources', async () => {
    for (const resource of [KB5, '..', '__x__', 'owner/repo']) {
      const pass = await store.passGate(resource, 'owner-a', 1)
      expect(pass.token).toBe(1)
      expect((await store.gateStatus(resource))?.resource).toBe(resource)
    }
  })
})
