"""A far-away dealer for tests: relays one TCP connection, each line held back for a delay each way.

``python delay_proxy.py DELAY_MS DEALER_HOST DEALER_PORT -- COMMAND...`` listens on a free
loopback port, runs COMMAND with ``{proxy_port}`` replaced by it, relays the one connection
COMMAND makes to the dealer, every line forwarded ``DELAY_MS`` after it arrived (in order, not
queued behind the one before: a link's latency, not its bandwidth), and exits with COMMAND's
status. The dealer's clock then runs twice the delay longer for each reply than the bot sees.
"""

from __future__ import annotations

import queue
import socket
import subprocess
import sys
import threading
import time


def _relay(source: socket.socket, target: socket.socket, delay_s: float) -> None:
    """Forward what ``source`` sends to ``target``, each chunk ``delay_s`` after it arrived."""
    held: queue.Queue[tuple[float, bytes]] = queue.Queue()

    def send() -> None:
        while True:
            due, data = held.get()
            if not data:
                target.shutdown(socket.SHUT_WR)
                return
            time.sleep(max(0.0, due - time.monotonic()))
            target.sendall(data)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        while data := source.recv(65536):
            held.put((time.monotonic() + delay_s, data))
    except OSError:
        pass
    held.put((0.0, b""))
    sender.join()


def main(argv: list[str]) -> int:
    delay_s, host, port = float(argv[0]) / 1000, argv[1], int(argv[2])
    listener = socket.create_server(("127.0.0.1", 0))
    proxy_port = str(listener.getsockname()[1])
    bot = subprocess.Popen([part.replace("{proxy_port}", proxy_port) for part in argv[argv.index("--") + 1 :]])
    listener.settimeout(60)
    near, _ = listener.accept()
    far = socket.create_connection((host, port))
    for sock in (near, far):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    links = [threading.Thread(target=_relay, args=pair, daemon=True) for pair in ((near, far, delay_s), (far, near, delay_s))]
    for link in links:
        link.start()
    return bot.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
