"""The API's blueprints."""
