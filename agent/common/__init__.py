"""What every layer of ``agent`` shares and that knows nothing of poker: files written whole or not
at all (``files``), the YAML loader of every file we read (``yaml_files``: a key given twice is
refused), and the process pools that spread work over the cores (``workers``). The bottom layer of
``agent``: imports nothing of ours."""
