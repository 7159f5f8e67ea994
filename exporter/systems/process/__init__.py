"""Process groups of the middleware: count, CPU, memory and threads per group."""
