"""Game logs (``canasta-log/1``): writing, reading, validating and showing them."""
