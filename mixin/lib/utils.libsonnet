// Helpers shared by the rule files of the mixin.
{
  // A threshold value as PromQL text: integers without a fraction, others with the fewest significant digits
  // that give the same number back (jsonnet's own toString prints 0.1 as 0.10000000000000001).
  number(v)::
    if std.isString(v) then v
    else if v == std.floor(v) && std.abs(v) < 1e15 then '%d' % v
    else
      local digits = [n for n in std.range(1, 17) if std.parseJson(std.format('%.' + n + 'g', v)) == v];
      std.format('%.' + digits[0] + 'g', v),

  // The `middleware:threshold:<name>` recording rule of a threshold of config.thresholds.
  threshold(config, name, guideRow):: {
    record: 'middleware:threshold:' + name,
    expr: 'vector(%s)' % $.number(config.thresholds[name]),
    labels: { guide_row: guideRow },
  },

  // The runbook link of an alert, from config.runbookURLPattern.
  runbook(config, system, alertname)::
    config.runbookURLPattern % { system: system, alert: std.asciiLower(alertname), alertname: alertname },

  // Folded text: the lines of a ||| block joined with single spaces (YAML's `>-`).
  fold(text):: std.join(' ', std.filter(function(l) l != '', std.split(text, '\n'))),
}
