// The recording groups: the thresholds of each system (middleware-<system>-thresholds, from config.thresholds),
// the dashboard figures of HPOM and Domino (middleware-<system>-recording) and the shared recording rules
// (middleware-recording), and the forecasts (middleware-forecasts, generated from exporter/advisor/forecasts.py).
(import 'certificates.libsonnet') +
(import 'domino.libsonnet') +
(import 'exporter.libsonnet') +
(import 'filesystem.libsonnet') +
(import 'host.libsonnet') +
(import 'hpom.libsonnet') +
(import 'ibmmq.libsonnet') +
(import 'oracle.libsonnet') +
(import 'process.libsonnet') +
(import 'vhi.libsonnet') +
(import 'recording.libsonnet') +
(import 'forecasts.libsonnet')
