/*
 * kafka-mock: a Kafka-protocol broker for local runs, tests and benchmarks,
 * built on librdkafka's mock cluster (no JVM, starts in milliseconds).
 *
 *   kafka-mock [--brokers N] [--port P] topic:partitions ...
 *
 * Prints one line "bootstrap host:port,..." then serves line commands on
 * stdin, each answered with "ok" or "error <message>":
 *   down [broker_id] | up [broker_id] | rtt <ms> [broker_id]
 *   errors <api_key> <count> <kafka_error_code> | quit
 * A missing broker_id means all brokers. EOF on stdin (the parent died),
 * SIGTERM and SIGINT destroy the cluster and exit 0.
 *
 * The mock has no controller: CreateTopics and idempotent producers are
 * refused, so the topics are created here.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

/* librdkafka 2.0 has no option for the mock's listen port: each broker binds
 * 127.0.0.1:0. For --port we interpose bind() (librdkafka calls it through the
 * PLT, so this definition wins) and rewrite port 0 to P, P+1, ... while the
 * cluster is being created. */
static int next_port;

int bind(int fd, const struct sockaddr *addr, socklen_t len) {
        static int (*real_bind)(int, const struct sockaddr *, socklen_t);
        struct sockaddr_in sin;

        if (!real_bind)
                real_bind = (int (*)(int, const struct sockaddr *, socklen_t))
                    dlsym(RTLD_NEXT, "bind");
        if (!next_port || addr->sa_family != AF_INET ||
            ((const struct sockaddr_in *)addr)->sin_port != 0)
                return real_bind(fd, addr, len);
        memcpy(&sin, addr, sizeof(sin));
        sin.sin_port = htons((uint16_t)next_port);
        /* A broker restarted on its port must not wait out the old one's TIME_WAIT sockets. */
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int));
        if (real_bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
                /* librdkafka would abort() on a failed listener: fail clearly. */
                fprintf(stderr, "kafka-mock: cannot listen on 127.0.0.1:%d: %s\n",
                        next_port, strerror(errno));
                exit(1);
        }
        next_port++;
        return 0;
}

static volatile sig_atomic_t stopping;
static void on_signal(int sig) { (void)sig; stopping = 1; }

static void reply(rd_kafka_resp_err_t err) {
        if (err)
                printf("error %s\n", rd_kafka_err2str(err));
        else
                printf("ok\n");
        fflush(stdout);
}

/* Parses an optional integer argument; returns 0 if present but malformed. */
static int opt_int(const char *s, long *out, long dflt) {
        char *end;
        if (!s) {
                *out = dflt;
                return 1;
        }
        *out = strtol(s, &end, 10);
        return *s && !*end;
}

/* Runs one command line; returns 0 on "quit". */
static int command(rd_kafka_mock_cluster_t *mc, char *line) {
        char *cmd = strtok(line, " \t\r"), *a = strtok(NULL, " \t\r"),
             *b = strtok(NULL, " \t\r"), *c = strtok(NULL, " \t\r");
        long x, y, z;

        if (!cmd)
                printf("error empty command\n");
        else if (!strcmp(cmd, "quit"))
                return 0;
        else if (!strcmp(cmd, "down") && opt_int(a, &x, -1))
                reply(rd_kafka_mock_broker_set_down(mc, (int32_t)x));
        else if (!strcmp(cmd, "up") && opt_int(a, &x, -1))
                reply(rd_kafka_mock_broker_set_up(mc, (int32_t)x));
        else if (!strcmp(cmd, "rtt") && a && opt_int(a, &x, 0) && x >= 0 &&
                 opt_int(b, &y, -1))
                reply(rd_kafka_mock_broker_set_rtt(mc, (int32_t)y, (int)x));
        else if (!strcmp(cmd, "errors") && c && opt_int(a, &x, 0) &&
                 opt_int(b, &y, 0) && opt_int(c, &z, 0) && y > 0 &&
                 y <= 100000) {
                rd_kafka_resp_err_t *errs = malloc(sizeof(*errs) * (size_t)y);
                for (long i = 0; i < y; i++)
                        errs[i] = (rd_kafka_resp_err_t)z;
                rd_kafka_mock_push_request_errors_array(mc, (int16_t)x,
                                                        (size_t)y, errs);
                free(errs);
                reply(RD_KAFKA_RESP_ERR_NO_ERROR);
        } else
                printf("error bad command: %s\n", cmd);
        fflush(stdout);
        return 1;
}

int main(int argc, char **argv) {
        long brokers = 1, port = 0;
        char errstr[256], buf[4096];
        size_t used = 0;
        sigset_t block, waitmask;
        struct sigaction sa = {.sa_handler = on_signal};
        int i, running = 1, rc = 0;

        /* Block the signals before librdkafka starts threads (they inherit
         * the mask), so only pselect() below can take them, without races. */
        sigemptyset(&block);
        sigaddset(&block, SIGTERM);
        sigaddset(&block, SIGINT);
        sigprocmask(SIG_BLOCK, &block, &waitmask);
        sigdelset(&waitmask, SIGTERM);
        sigdelset(&waitmask, SIGINT);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        signal(SIGPIPE, SIG_IGN); /* a dead parent must not kill us mid-reply */

        for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i += 2) {
                long *dst = !strcmp(argv[i], "--brokers") ? &brokers
                            : !strcmp(argv[i], "--port")  ? &port
                                                          : NULL;
                if (!dst || i + 1 >= argc || !opt_int(argv[i + 1], dst, 0) ||
                    *dst < (dst == &port ? 0 : 1) || *dst > 65535 ||
                    port + brokers > 65536) {
                        fprintf(stderr, "usage: kafka-mock [--brokers N] "
                                        "[--port P] topic:partitions ...\n");
                        return 2;
                }
        }

        /* With stdin closed, librdkafka could be handed fd 0 and we would read
         * its sockets as commands. */
        if (fcntl(0, F_GETFD) == -1) {
                fprintf(stderr, "kafka-mock: stdin must be open\n");
                return 2;
        }

        /* The mock cluster needs a client instance for its bookkeeping only. */
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        rd_kafka_conf_set(conf, "log_level", "4", NULL, 0);
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr,
                                      sizeof(errstr));
        if (!rk) {
                fprintf(stderr, "kafka-mock: %s\n", errstr);
                return 1;
        }
        next_port = (int)port;
        rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, (int)brokers);
        next_port = 0;
        if (!mc) {
                fprintf(stderr, "kafka-mock: cannot create mock cluster\n");
                return 1;
        }

        for (; i < argc; i++) {
                char *colon = strrchr(argv[i], ':'), name[256];
                long parts;
                if (!colon || colon == argv[i] || colon - argv[i] > 249 ||
                    !opt_int(colon + 1, &parts, 0) || parts < 1) {
                        fprintf(stderr, "kafka-mock: bad topic spec %s\n", argv[i]);
                        rc = 1;
                        break;
                }
                snprintf(name, sizeof(name), "%.*s", (int)(colon - argv[i]), argv[i]);
                rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(
                    mc, name, (int)parts, brokers < 3 ? (int)brokers : 3);
                if (err) {
                        fprintf(stderr, "kafka-mock: topic %s: %s\n", name,
                                rd_kafka_err2str(err));
                        rc = 1;
                        break;
                }
        }

        if (rc == 0) {
                printf("bootstrap %s\n", rd_kafka_mock_cluster_bootstraps(mc));
                fflush(stdout);
        }

        while (rc == 0 && running && !stopping) {
                fd_set rfds;
                FD_ZERO(&rfds);
                FD_SET(0, &rfds);
                /* pselect unblocks SIGTERM/SIGINT only while waiting. */
                if (pselect(1, &rfds, NULL, NULL, NULL, &waitmask) == -1) {
                        if (errno == EINTR)
                                continue; /* a signal: re-check `stopping` */
                        break;
                }
                ssize_t n = read(0, buf + used, sizeof(buf) - 1 - used);
                if (n <= 0)
                        break; /* EOF: the parent is gone */
                used += (size_t)n;
                char *start = buf, *nl;
                while (running && (nl = memchr(start, '\n', used - (size_t)(start - buf)))) {
                        *nl     = '\0';
                        running = command(mc, start);
                        start   = nl + 1;
                }
                used -= (size_t)(start - buf);
                memmove(buf, start, used);
                if (used == sizeof(buf) - 1)
                        used = 0; /* an over-long line: drop it */
        }

        rd_kafka_mock_cluster_destroy(mc);
        rd_kafka_destroy(rk);
        return rc;
}
