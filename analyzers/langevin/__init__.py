"""Langevin sampling of compact protein language models (seed paper 002): designed sequences on a
contact map, masked-token training, norm-constrained pseudo-Langevin sampling, attention vs contacts.

Importing the package registers the ``langevin.*`` analyzers and the ``kb langevin`` commands.
"""

# registration: the analyzers and the kb langevin commands
from analyzers.langevin import cli, spec  # noqa: F401
