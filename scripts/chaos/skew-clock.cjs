// Preload (node --require) for the chaos suite: shifts this process's wall clock, as on a runner whose
// clock is wrong. `faketime` is not installed on the CI machines, so this is done in-process instead:
//   LEASEFENCE_CHAOS_SKEW_MS        the shift in ms (e.g. 3600000 or -3600000)
//   LEASEFENCE_CHAOS_SKEW_AFTER_MS  optional: the clock is right at first and jumps by the shift this many
//                                   ms after the process started (an NTP step while it runs)
// Date.now(), new Date() and Date() read the shifted time. performance.now() and process.hrtime() (the
// monotonic clocks) are left alone: a wrong wall clock does not change them either.
'use strict'
const skew = Number(process.env.LEASEFENCE_CHAOS_SKEW_MS || 0)
const after = Number(process.env.LEASEFENCE_CHAOS_SKEW_AFTER_MS || 0)
if (skew) {
  const RealDate = Date
  const started = performance.now()
  const shift = () => (after > 0 && performance.now() - started < after ? 0 : skew)
  const nowMs = () => RealDate.now() + shift()
  function SkewedDate(...args) {
    if (!new.target) return new RealDate(nowMs()).toString()
    return Reflect.construct(RealDate, args.length ? args : [nowMs()], new.target)
  }
  Object.setPrototypeOf(SkewedDate, RealDate)
  SkewedDate.prototype = RealDate.prototype
  SkewedDate.now = nowMs
  SkewedDate.parse = RealDate.parse
  SkewedDate.UTC = RealDate.UTC
  globalThis.Date = SkewedDate
}
