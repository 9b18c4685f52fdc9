/**
 * Maps any resource string to a Firestore document ID, injectively.
 *
 * Firestore IDs may not contain `/`, may not be `.` or `..`, may not match `__.*__` and must stay
 * under 1,500 bytes. We keep `[A-Za-z0-9-]` as is and percent-encode every other UTF-8 byte
 * (`_`, `.`, `~` and `%` included), so no ID can contain `/`, `.` or `__`, and decoding is unique.
 * Names whose encoding would be longer than MAX_PLAIN_ID become `~h~` + sha256: `~` never survives
 * the plain encoding, so the two forms cannot collide. The original string is stored in the document.
 */
export declare const MAX_PLAIN_ID = 400;
export declare function resourceDocId(resource: string): string;
export declare function validateResource(resource: string): void;
/** Slot i of an N-slot resource is its own lease document. */
export declare function slotResource(resource: string, slot: number): string;
