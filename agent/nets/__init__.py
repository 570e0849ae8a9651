"""Value networks and what they need at play time: the network (``valuenet``), the card abstraction
(``buckets``), ranges to network inputs and values back (``encoding``) and the model manifest with safe
loading of shipped networks (``manifest``). Training them lives in :mod:`agent.training`."""
