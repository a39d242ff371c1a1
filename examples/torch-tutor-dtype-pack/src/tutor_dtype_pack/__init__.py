"""An example torch-tutor pack. The YAML files next to this module are the pack."""
