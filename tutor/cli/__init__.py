"""The ``torch-tutor`` command. Each module registers its subcommands; heavy imports stay lazy."""
