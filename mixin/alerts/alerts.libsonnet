// The alert groups (middleware-<system>), one file per system (recording rules are in ../rules/).
(import 'certificates.libsonnet') +
(import 'domino.libsonnet') +
(import 'exporter.libsonnet') +
(import 'filesystem.libsonnet') +
(import 'host.libsonnet') +
(import 'hpom.libsonnet') +
(import 'ibmmq.libsonnet') +
(import 'oracle.libsonnet') +
(import 'process.libsonnet') +
(import 'vhi.libsonnet')
