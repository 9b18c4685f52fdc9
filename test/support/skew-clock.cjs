// Preload (node --require) that shifts this process's wall clock by LEASEFENCE_TEST_CLOCK_SKEW_MS:
// Date.now(), new Date() and Date() all read the skewed time, as on a runner whose clock is wrong.
// performance.now() (monotonic) is left alone, as a wrong wall clock does not change it either.
'use strict'
const skew = Number(process.env.LEASEFENCE_TEST_CLOCK_SKEW_MS || 0)
const RealDate = Date

function SkewedDate(...args) {
  if (!new.target) return new RealDate(RealDate.now() + skew).toString()
  return Reflect.construct(RealDate, args.length ? args : [RealDate.now() + skew], new.target)
}
Object.setPrototypeOf(SkewedDate, RealDate)
SkewedDate.prototype = RealDate.prototype
SkewedDate.now = () => RealDate.now() + skew
SkewedDate.parse = RealDate.parse
SkewedDate.UTC = RealDate.UTC
globalThis.Date = SkewedDate
