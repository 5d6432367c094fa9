/**
 * Which format a topic's values (or keys) use: the first rule of `FLOE_ROUTES.formats` that
 * matches the topic (by exact `topic`, by `topicPattern`, or any topic when it names neither)
 * and sets that part wins; otherwise `FLOE_VALUE_FORMAT` for values, and raw bytes (no
 * decoding) for keys. Answers are memoized per topic.
 */
import type { Routes, ValueFormat } from '../config.js'

export type FormatPart = 'value' | 'key'

export interface FormatSelector {
  (topic: string, part: FormatPart): ValueFormat | undefined
}

export function formatSelector(routes: Pick<Routes, 'formats'>, valueFormat: ValueFormat): FormatSelector {
  const rules = routes.formats.map((rule) => ({
    ...rule,
    regex: rule.topicPattern === undefined ? undefined : new RegExp(rule.topicPattern),
  }))
  const memo = new Map<string, ValueFormat | undefined>()
  return (topic, part) => {
    const key = `${part}\u0000${topic}`
    if (memo.has(key)) return memo.get(key)
    let found: ValueFormat | undefined = part === 'value' ? valueFormat : undefined
    for (const rule of rules) {
      const matches = rule.topic !== undefined ? rule.topic === topic : rule.regex !== undefined ? rule.regex.test(topic) : true
      const format = rule[part]
      if (matches && format !== undefined) {
        found = format
        break
      }
    }
    memo.set(key, found)
    return found
  }
}

/** Every format the configuration can select (to check up front that what they need is configured). */
export function configuredFormats(routes: Pick<Routes, 'formats'>, valueFormat: ValueFormat): Set<ValueFormat> {
  const out = new Set<ValueFormat>([valueFormat])
  for (const rule of routes.formats) {
    if (rule.value) out.add(rule.value)
    if (rule.key) out.add(rule.key)
  }
  return out
}
