import { createHash } from 'node:crypto'
import { ValidationError } from './errors'

/**
 * Maps any resource string to a Firestore document ID, injectively.
 *
 * Firestore IDs may not contain `/`, may not be `.` or `..`, may not match `__.*__` and must stay
 * under 1,500 bytes. We keep `[A-Za-z0-9-]` as is and percent-encode every other UTF-8 byte
 * (`_`, `.`, `~` and `%` included), so no ID can contain `/`, `.` or `__`, and decoding is unique.
 * Names whose encoding would be longer than MAX_PLAIN_ID become `~h~` + sha256: `~` never survives
 * the plain encoding, so the two forms cannot collide. The original string is stored in the document.
 */
export const MAX_PLAIN_ID = 400

export function resourceDocId(resource: string): string {
  validateResource(resource)
  const bytes = Buffer.from(resource, 'utf8')
  let out = ''
  for (const b of bytes) {
    const c = String.fromCharCode(b)
    out += /[A-Za-z0-9-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`
    if (out.length > MAX_PLAIN_ID) break
  }
  if (out.length > MAX_PLAIN_ID) {
    return `~h~${createHash('sha256').update(bytes).digest('hex')}`
  }
  return out
}

export function validateResource(resource: string): void {
  if (typeof resource !== 'string' || resource.trim() === '') {
    throw new ValidationError('resource: must be a non-empty string (for example "owner/repo" or "env:staging")')
  }
  if (resource.length > 4096) {
    throw new ValidationError(`resource: ${resource.length} characters is too long; keep it under 4096`)
  }
}

/** Slot i of an N-slot resource is its own lease document. */
export function slotResource(resource: string, slot: number): string {
  return `${resource}#slot-${slot}`
}
