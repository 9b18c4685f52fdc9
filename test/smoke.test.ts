import { afterAll, expect, test } from 'vitest'
import { makeStore, uniqueProject } from './support/firestore'

const project = uniqueProject('smoke')
const store = makeStore(project)
afterAll(() => store.close())

test('acquire, renew, gate, release', async () => {
  const a = await store.acquire('o/r', 'alice', { ttlMs: 5000 })
  expect(a.acquired).toBe(true)
  if (!a.acquired) return
  expect(a.lease.token).toBe(1)
  const b = await store.acquire('o/r', 'bob', { ttlMs: 5000 })
  expect(b.acquired).toBe(false)
  expect(await store.renew('o/r', 'alice', 1, 5000)).toMatchObject({ renewed: true })
  expect(await store.passGate('o/r', 'alice', 1)).toMatchObject({ token: 1, previousToken: 0 })
  expect(await store.release('o/r', 'alice', 1)).toMatchObject({ released: true })
  const c = await store.acquire('o/r', 'bob', { ttlMs: 5000 })
  expect(c.acquired && c.lease.token).toBe(2)
})
