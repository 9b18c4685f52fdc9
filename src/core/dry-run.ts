import type { LeaseStore } from './lease-store'

/** What an acquisition would do, from reads only (dry run). */
export interface AcquirePlan {
  resource: string
  wouldAcquire: boolean
  /** The token this acquisition would get (or the holder's, when busy). */
  token: number
  holder?: string
  remainingMs: number
  message: string
}

export async function planAcquire(store: LeaseStore, resource: string, owner: string): Promise<AcquirePlan> {
  const s = await store.status(resource)
  if (s.live && s.owner !== owner) {
    return {
      resource,
      wouldAcquire: false,
      token: s.token,
      holder: s.owner,
      remainingMs: s.remainingMs,
      message: `dry run: "${resource}" is held by ${s.owner} (token ${s.token}); a real run would be busy. Proceeding anyway, nothing written.`
    }
  }
  return {
    resource,
    wouldAcquire: true,
    token: s.token + 1,
    remainingMs: 0,
    message: `dry run: would acquire "${resource}" with token ${s.token + 1}; nothing written.`
  }
}

/** What the gate would say, from reads only (dry run). */
export async function planGate(store: LeaseStore, resource: string, token: number): Promise<{ wouldPass: boolean; message: string }> {
  const gate = await store.gateStatus(resource)
  const high = gate?.fencing ?? 0
  if (token < high) {
    return { wouldPass: false, message: `dry run: the gate would refuse token ${token} (token ${high} passed); running anyway` }
  }
  return { wouldPass: true, message: `dry run: the gate would pass token ${token} (highest so far ${high}); nothing written` }
}
