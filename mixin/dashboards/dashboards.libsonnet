// The dashboards: their panels come from sources/<uid>.json (written by dashboards/build.py with the
// grafana-foundation-sdk; they are the dashboards as the default configuration renders them), and this file applies
// the configuration: the job selector (the job variable's query and its "All"), the cluster variable and matcher
// with showMultiCluster. `python -m tools.mixin` writes the result to
// dashboards/<uid>.json; tests/alerting/test_mixin.py fails while those differ from a fresh render.
local sources = {
  'middleware-exporter.json': import 'sources/middleware-exporter.json',
  'middleware-host.json': import 'sources/middleware-host.json',
  'middleware-hpom.json': import 'sources/middleware-hpom.json',
  'middleware-ibmmq.json': import 'sources/middleware-ibmmq.json',
  'middleware-oracle.json': import 'sources/middleware-oracle.json',
  'middleware-vhi.json': import 'sources/middleware-vhi.json',
};

// With hostMetricsSource 'node_exporter' these replace their namesakes: the host figures from node_exporter's
// node_* series, the Job variable on node_exporter's jobs (nodeExporterSelector).
local nodeExporterSources = {
  'middleware-host.json': import 'sources/variants/node_exporter/middleware-host.json',
};

// The selector the sources were written with (mixin/config.libsonnet's default middlewareSelector) and the "All"
// of their job variable.
local sourceSelector = 'job=~"middleware.*"';
local sourceJobAll = 'middleware.*';
// ... and the node_exporter variants' (config.libsonnet's default nodeExporterSelector).
local sourceNodeSelector = 'job="node-exporter"';
local sourceNodeJobAll = 'node-exporter';

// Every string of a JSON value through f.
local mapStrings(value, f) =
  if std.isString(value) then f(value)
  else if std.isArray(value) then [mapStrings(v, f) for v in value]
  else if std.isObject(value) then { [k]: mapStrings(value[k], f) for k in std.objectFields(value) }
  else value;

{
  grafanaDashboards+:: {
    [name]: (
      if $._config.hostMetricsSource == 'node_exporter' && std.objectHas(nodeExporterSources, name)
      then $._middlewareDashboard(nodeExporterSources[name], sourceNodeSelector, sourceNodeJobAll,
                                  $._config.nodeExporterSelector)
      else $._middlewareDashboard(sources[name], sourceSelector, sourceJobAll, $._config.middlewareSelector)
    )
    for name in std.objectFields(sources)
  },

  // A source dashboard whose job variable was written with `sourceSel` (and "All" `sourceAll`), for the jobs of
  // the configured selector `jobSelector`; the exporter's own series keep the mixin's middlewareSelector.
  _middlewareDashboard(source, sourceSel, sourceAll, jobSelector):: (
    local c = $._config;
    // The job variable's "All": the value of the selector's (single) job matcher, e.g. middleware.* or middleware.
    local jobAll = std.split(jobSelector, '"')[1];
    local clusterMatcher = c.clusterLabel + '=~"$cluster"';
    local cluster = if c.showMultiCluster then clusterMatcher + ', ' else '';
    local rewrite(text) =
      local exporters = if sourceSel != sourceSelector
      then std.strReplace(text, sourceSelector, cluster + c.middlewareSelector) else text;
      local selected = std.strReplace(exporters, sourceSel, cluster + jobSelector);
      if c.showMultiCluster then std.strReplace(selected, 'job=~"$job"', clusterMatcher + ', job=~"$job"')
      else selected;
    local dashboard = mapStrings(source, rewrite);
    // the job variable's "All" for the configured selector
    local variables = [
      if v.name == 'job' && std.objectHas(v, 'allValue') && v.allValue == sourceAll then v { allValue: jobAll } else v
      for v in dashboard.templating.list
    ];
    local clusterVariable = {
      allValue: '.+',
      current: { selected: true, text: ['All'], value: ['$__all'] },
      datasource: { type: 'prometheus', uid: '${datasource}' },
      definition: 'label_values(middleware_exporter_build_info{%s}, %s)' % [c.middlewareSelector, c.clusterLabel],
      includeAll: true,
      label: 'Cluster',
      multi: true,
      name: 'cluster',
      query: 'label_values(middleware_exporter_build_info{%s}, %s)' % [c.middlewareSelector, c.clusterLabel],
      refresh: 2,
      skipUrlSync: false,
      sort: 1,
      type: 'query',
    };
    dashboard {
      templating+: {
        list: [v for v in variables if v.name == 'datasource']
              + (if c.showMultiCluster then [clusterVariable] else [])
              + [v for v in variables if v.name != 'datasource'],
      },
    }
  ),
}
