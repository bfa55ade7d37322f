"""Settings: defaults, then the config file, then the environment, then flags.

Every key is declared once in FIELDS (with its type, default and environment variable), so
validation, `config show` and config.example.toml all speak about the same list.

The modules: fields.py (the keys), checks.py (each value and table checked, and the
helpers of the messages), settings.py (Settings, load_settings, for_model, the file read).
What the rest of agentcli uses is imported from here.
"""

from __future__ import annotations

from agentcli.config.checks import did_you_mean, shown_value
from agentcli.config.fields import FIELDS, SECRET_KEYS, Field
from agentcli.config.settings import (
    DEFAULT_MODEL,
    POSTGRES_SCHEMES,
    Settings,
    config_dir,
    data_dir,
    default_config_path,
    for_model,
    load_settings,
)

__all__ = [
    "DEFAULT_MODEL",
    "FIELDS",
    "POSTGRES_SCHEMES",
    "SECRET_KEYS",
    "Field",
    "Settings",
    "config_dir",
    "data_dir",
    "default_config_path",
    "did_you_mean",
    "for_model",
    "load_settings",
    "shown_value",
]
