# kubeling's components in one image with no base image from a registry: the
# root filesystem is made locally by `npm run compose:prepare` (this machine's
# Node binary and the libraries it links, etcd, busybox, and the repository
# with its node_modules).
FROM scratch
ADD .kubeling/compose/rootfs.tar /
ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
WORKDIR /app
CMD ["node", "--version"]
