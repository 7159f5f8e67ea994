"""The host: /proc and /sys figures that vmstat, iostat and sar show."""
