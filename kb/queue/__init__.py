"""The run queue: runs wait in the index database until a worker, here or on a cluster, executes them.

- ``store``: the runs table (enqueue, claim, heartbeat, finish, recover) and the reads of results;
- ``execution``: what a worker does with a claimed run (analyzer, artifacts, evidence, verdict);
- ``executors``: where runs execute: the registry of executor plug-ins (local, ray, slurm) and their
  ``JobConfig``;
- ``slurm``: runs as Slurm jobs (submit, watch, cancel, resubmit after preemption);
- ``daemon``: the app's background ``kb worker`` process per KB home.
"""
