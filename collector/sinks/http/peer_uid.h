/* Which local user is at the other end of a TCP connection? For a
 * connection from this machine (loopback), the kernel knows the user that
 * owns the client's socket: sock_diag (NETLINK_SOCK_DIAG) looks up that
 * socket by its four-tuple and says. A connection from elsewhere has no
 * local owner. */
#ifndef MEMSCOPE_PEER_UID_H
#define MEMSCOPE_PEER_UID_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

/* The uid owning the client end of connected socket fd, when that end is a
 * socket of this machine's network namespace: true and *uid; false when it
 * is not (a remote client) or the kernel cannot say. */
bool peer_uid(int fd, uid_t *uid);
/* The same for a connection known by its two addresses (before accept's
 * socket is handed over). */
bool peer_uid_of(const struct sockaddr_storage *local, const struct sockaddr_storage *remote, uid_t *uid);

#endif
