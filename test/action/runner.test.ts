import { describe, expect, test } from 'vitest'
import { parseFileCommand, parseWorkflowCommands } from '../support/runner'

/** The harness parses file commands and workflow commands the way the runner does. */
describe('simulated runner parsing', () => {
  test('file commands: name=value and name<<DELIM blocks', () => {
    const text = 'a=1\nb=x=y\n\nmulti<<ghadelimiter_123\nline 1\nline=2\nghadelimiter_123\nc<<EOF\n\nEOF\n'
    expect(parseFileCommand(text)).toEqual({ a: '1', b: 'x=y', multi: 'line 1\nline=2', c: '' })
    expect(() => parseFileCommand('x<<EOF\nno end\n')).toThrow(/no closing delimiter/)
    expect(() => parseFileCommand('novalue\n')).toThrow(/invalid file command/)
  })

  test('workflow commands: annotations with properties, masks, groups', () => {
    const out = [
      'plain',
      '::notice title=leasefence%3A lease busy,file=a%2Cb::held by x%0Asecond line 100%25',
      '::add-mask::s3cret',
      '::group::log',
      'inside',
      '::endgroup::',
      '::error::boom'
    ].join('\n')
    const r = parseWorkflowCommands(out)
    expect(r.annotations).toEqual([
      { level: 'notice', message: 'held by x\nsecond line 100%', properties: { title: 'leasefence: lease busy', file: 'a,b' } },
      { level: 'error', message: 'boom', properties: {} }
    ])
    expect(r.masks).toEqual(['s3cret'])
    expect(r.log).toContain('inside')
    expect(r.log).not.toContain('s3cret')
  })
})
