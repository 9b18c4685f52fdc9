import type { Lease, LeaseStore, RenewResult } from './lease-store'
import { systemClock, withTimeout, type Clock } from './time'

export interface HeartbeatEvents {
  onRenew?(r: { expiresAt: Date; deadline: number; count: number }): void
  onError?(err: unknown, failures: number): void
  /** Called once, the moment the lease is declared lost. Renewal stops for good. */
  onLost?(reason: string): void
}

export interface HeartbeatOptions extends HeartbeatEvents {
  intervalMs: number
  clock?: Clock
}

export interface HeartbeatStats {
  renewals: number
  failures: number
  lost: boolean
  lostReason?: string
}

type Renewer = Pick<LeaseStore, 'renew'>

/**
 * Keeps a lease alive: renews every `intervalMs` and declares the lease lost at once when a renewal is
 * refused, or when no renewal has been confirmed by the lease's deadline (ttl on the monotonic clock from
 * the send of the last confirmed renewal). Once lost, `signal` is aborted and it never renews again.
 */
export class Heartbeat {
  private readonly controller = new AbortController()
  private readonly clock: Clock
  private deadline: number
  private tickTimer?: NodeJS.Timeout
  private deadlineTimer?: NodeJS.Timeout
  private inFlight?: Promise<void>
  private stopped = false
  readonly stats: HeartbeatStats = { renewals: 0, failures: 0, lost: false }

  constructor(
    private readonly store: Renewer,
    private readonly lease: Pick<Lease, 'resource' | 'owner' | 'token' | 'ttlMs' | 'deadline'>,
    private readonly opts: HeartbeatOptions
  ) {
    this.clock = opts.clock ?? systemClock
    this.deadline = lease.deadline
  }

  /** Aborted when the lease is lost; pass it to whatever must stop then. */
  get signal(): AbortSignal {
    return this.controller.signal
  }

  get lost(): boolean {
    return this.stats.lost
  }

  start(): this {
    this.armDeadline()
    this.schedule(this.nextDelay())
    return this
  }

  /**
   * The interval, but never more than a third of the time left: a lease whose acquisition was slow (so
   * less than a full ttl is left) still gets its renewals in before the deadline.
   */
  private nextDelay(): number {
    const left = this.deadline - this.clock.monotonic()
    return Math.max(0, Math.min(this.opts.intervalMs, Math.floor(left / 3)))
  }

  /**
   * Stops renewing (without declaring loss) and waits for a renewal in flight, at most `waitMs`: a
   * renewal hung on the network must not keep a stopping process alive (its result is ignored anyway).
   */
  async stop(waitMs = 2000): Promise<void> {
    this.stopped = true
    clearTimeout(this.tickTimer)
    clearTimeout(this.deadlineTimer)
    await withTimeout(this.inFlight ?? Promise.resolve(), waitMs, 'renewal in flight').catch(() => undefined)
  }

  private schedule(ms: number): void {
    if (this.stopped || this.stats.lost) return
    this.tickTimer = setTimeout(() => {
      this.inFlight = this.beat().finally(() => (this.inFlight = undefined))
    }, ms)
  }

  private armDeadline(): void {
    clearTimeout(this.deadlineTimer)
    const left = this.deadline - this.clock.monotonic()
    this.deadlineTimer = setTimeout(() => {
      if (this.clock.monotonic() >= this.deadline) {
        this.declareLost(`no renewal was confirmed within the ttl (${this.lease.ttlMs}ms)`)
      } else this.armDeadline()
    }, Math.max(0, left))
  }

  private async beat(): Promise<void> {
    if (this.stopped || this.stats.lost) return
    let result: RenewResult
    try {
      result = await this.store.renew(this.lease.resource, this.lease.owner, this.lease.token, this.lease.ttlMs)
    } catch (err) {
      if (this.stopped || this.stats.lost) return
      this.stats.failures++
      this.opts.onError?.(err, this.stats.failures)
      // Retry sooner than a full interval; the deadline timer decides when it is too late.
      this.schedule(Math.max(250, Math.floor(this.opts.intervalMs / 3)))
      return
    }
    if (this.stopped || this.stats.lost) return
    if (!result.renewed) {
      this.declareLost(result.reason)
      return
    }
    // A renewal that came back after the deadline cannot revive the lease: the timer has decided.
    this.deadline = Math.max(this.deadline, result.deadline)
    this.stats.renewals++
    this.armDeadline()
    this.opts.onRenew?.({ expiresAt: result.expiresAt, deadline: result.deadline, count: this.stats.renewals })
    this.schedule(this.nextDelay())
  }

  private declareLost(reason: string): void {
    if (this.stats.lost || this.stopped) return
    this.stats.lost = true
    this.stats.lostReason = reason
    clearTimeout(this.tickTimer)
    clearTimeout(this.deadlineTimer)
    this.controller.abort(new Error(`lease lost: ${reason}`))
    this.opts.onLost?.(reason)
  }
}
