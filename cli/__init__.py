"""The `canasta` console command."""
