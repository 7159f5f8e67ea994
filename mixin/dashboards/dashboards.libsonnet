// Placeholder until the dashboards are written in jsonnet: no dashboards from the mixin yet.
{
  grafanaDashboards+:: {},
}
