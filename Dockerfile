# The DeepStack bot as a container: `docker run IMAGE --host H --port P` plays a match
# against an ACPC dealer (defaults: HUNL, the deepstack bot, config.yaml and models baked in).
#
# CPU image (default):  docker build -t deepstack .
# CUDA image:           docker build -t deepstack:cuda \
#                          --build-arg BASE=nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04 \
#                          --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu124 .
# Ray cluster nodes for data generation (deepstack generate --ray-address):
#                       docker build -t deepstack:ray --build-arg 'EXTRAS=[ray]' .
ARG BASE=python:3.11-slim
FROM ${BASE}
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ARG EXTRAS=
ENV PIP_NO_CACHE_DIR=1 PYTHONUNBUFFERED=1 DEBIAN_FRONTEND=noninteractive
# Python 3.11 with its headers (Python.h) and a C compiler: the native kernels are built by cffi at
# install time. The python:3.11 images ship the headers; a base without Python 3.11 (the CUDA image,
# Ubuntu) gets it from apt with python3.11-dev. The build stops here, naming the file, if Python.h is missing.
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && (command -v python3.11 >/dev/null \
     || apt-get install -y --no-install-recommends python3.11 python3.11-dev python3.11-venv python3-pip) \
 && python3.11 -c "import os, sys, sysconfig; h = os.path.join(sysconfig.get_paths()['include'], 'Python.h'); \
os.path.isfile(h) or sys.exit('no ' + h + ': the cffi build needs the Python 3.11 headers (python3.11-dev)')" \
 && rm -rf /var/lib/apt/lists/*
# torch in a layer of its own, before our files: a change to the code does not download it again
RUN python3.11 -m pip install --index-url ${TORCH_INDEX} "torch>=2.4,<2.14"
WORKDIR /opt/deepstack
COPY pyproject.toml setup.py README.md config.yaml ./
COPY native ./native
COPY protocol ./protocol
COPY agent ./agent
COPY models ./models
RUN python3.11 -m pip install ".${EXTRAS}" \
 && apt-get purge -y gcc libc6-dev && apt-get autoremove -y
ENV DEEPSTACK_CONFIG=/opt/deepstack/config.yaml
# not root; its home is the working folder, where relative log paths (--log-json) are written
RUN useradd --create-home --shell /usr/sbin/nologin deepstack
USER deepstack
WORKDIR /home/deepstack
# `docker run IMAGE ARGS` is `deepstack play ARGS`; other commands: docker run --entrypoint deepstack IMAGE COMMAND ...
# `docker stop` ends a match as Ctrl-C does (the bot handles SIGTERM as PID 1), its logs whole
ENTRYPOINT ["deepstack", "play"]
CMD ["--help"]
