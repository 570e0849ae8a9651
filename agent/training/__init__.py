"""Making value networks: random ranges R(S, p) (``rangegen``), solved training situations
(``datagen``, sharded and resumable; ``cluster`` on Ray), auxiliary pre-flop targets (``aux_targets``)
and training with TorchScript export (``train``)."""
