#include "sinks/http/peer_uid.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The client's socket, seen from its side: source = our peer, destination =
 * our own address. */
static bool fill_id(struct inet_diag_req_v2 *r, const struct sockaddr_storage *local,
		    const struct sockaddr_storage *remote)
{
	if (local->ss_family != remote->ss_family)
		return false;
	r->sdiag_family = (uint8_t)local->ss_family;
	if (local->ss_family == AF_INET) {
		const struct sockaddr_in *l = (const void *)local, *p = (const void *)remote;

		r->id.idiag_sport = p->sin_port;
		r->id.idiag_dport = l->sin_port;
		memcpy(r->id.idiag_src, &p->sin_addr, 4);
		memcpy(r->id.idiag_dst, &l->sin_addr, 4);
		return true;
	}
	if (local->ss_family == AF_INET6) {
		const struct sockaddr_in6 *l = (const void *)local, *p = (const void *)remote;

		r->id.idiag_sport = p->sin6_port;
		r->id.idiag_dport = l->sin6_port;
		memcpy(r->id.idiag_src, &p->sin6_addr, 16);
		memcpy(r->id.idiag_dst, &l->sin6_addr, 16);
		return true;
	}
	return false;
}

bool peer_uid(int fd, uid_t *uid)
{
	struct sockaddr_storage local, remote;
	socklen_t llen = sizeof(local), rlen = sizeof(remote);

	if (getsockname(fd, (struct sockaddr *)&local, &llen) < 0 ||
	    getpeername(fd, (struct sockaddr *)&remote, &rlen) < 0)
		return false;
	return peer_uid_of(&local, &remote, uid);
}

bool peer_uid_of(const struct sockaddr_storage *local, const struct sockaddr_storage *remote, uid_t *uid)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req;
	union {
		struct nlmsghdr nlh;
		char bytes[8192];
	} reply;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct timeval timeout = { .tv_sec = 1 };
	bool found = false;
	ssize_t n;
	int nl;

	memset(&req, 0, sizeof(req));
	if (!fill_id(&req.r, local, remote))
		return false;
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0u;
	req.r.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return false;
	setsockopt(nl, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
	if (sendto(nl, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) != (ssize_t)sizeof(req))
		goto out;
	n = recv(nl, &reply, sizeof(reply), 0);
	if (n >= (ssize_t)NLMSG_LENGTH(sizeof(struct inet_diag_msg)) && reply.nlh.nlmsg_type == SOCK_DIAG_BY_FAMILY) {
		const struct inet_diag_msg *msg = NLMSG_DATA(&reply.nlh);

		/* Only a socket of this machine answers: a remote peer has none. */
		if (msg->id.idiag_sport == req.r.id.idiag_sport && msg->id.idiag_dport == req.r.id.idiag_dport) {
			*uid = msg->idiag_uid;
			found = true;
		}
	}
out:
	close(nl);
	return found;
}
