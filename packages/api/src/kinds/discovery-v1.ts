/**
 * discovery.k8s.io/v1: EndpointSlice, as upstream Kubernetes 1.32
 * (`k8s.io/api/discovery/v1`).
 */
import { boolean, described, enumString, int32, list, map, object, string, type Static } from '../schema/dsl.js';
import { kindOf } from '../schema/meta.js';
import { ObjectReference } from './core-v1.js';

const D = 'io.k8s.api.discovery.v1.';

export const EndpointConditions = object(D + 'EndpointConditions', 'EndpointConditions represents the current condition of an endpoint.', {
  ready: boolean('ready indicates that this endpoint is ready to receive traffic, according to whatever system is managing the endpoint.'),
  serving: boolean('serving indicates that this endpoint is able to receive traffic, according to whatever system is managing the endpoint.'),
  terminating: boolean('terminating indicates that this endpoint is terminating.'),
});

export const ForZone = object(
  D + 'ForZone',
  'ForZone provides information about which zones should consume this endpoint.',
  { name: string('name represents the name of the zone.') },
  ['name'],
);

export const EndpointHints = object(D + 'EndpointHints', 'EndpointHints provides hints describing how an endpoint should be consumed.', {
  forZones: list(ForZone, 'forZones indicates the zone(s) this endpoint should be consumed by when using topology aware routing.', { listType: 'atomic' }),
});

export const Endpoint = object(
  D + 'Endpoint',
  'Endpoint represents a single logical "backend" implementing a service.',
  {
    addresses: list(
      string(),
      'addresses of this endpoint. For EndpointSlices of addressType "IPv4" or "IPv6", the values are IP addresses in canonical form.',
      { listType: 'set' },
    ),
    conditions: described(EndpointConditions, 'conditions contains information about the current status of the endpoint.'),
    hostname: string('hostname of this endpoint.'),
    targetRef: described(ObjectReference, 'targetRef is a reference to a Kubernetes object that represents this endpoint.'),
    deprecatedTopology: map(string(), 'deprecatedTopology contains topology information part of the v1beta1 API.'),
    nodeName: string('nodeName represents the name of the Node hosting this endpoint.'),
    zone: string('zone is the name of the Zone this endpoint exists in.'),
    hints: described(EndpointHints, 'hints contains information associated with how an endpoint should be consumed.'),
  },
  ['addresses'],
);

export const EndpointPort = object(D + 'EndpointPort', 'EndpointPort represents a Port used by an EndpointSlice', {
  name: string('name represents the name of this port.'),
  protocol: enumString(['SCTP', 'TCP', 'UDP'], 'protocol represents the IP protocol for this port. Must be UDP, TCP, or SCTP. Default is TCP.'),
  port: int32('port represents the port number of the endpoint.'),
  appProtocol: string('The application protocol for this port.'),
});

export const EndpointSlice = kindOf(
  D + 'EndpointSlice',
  'EndpointSlice represents a set of service endpoints. Most EndpointSlices are created by the EndpointSlice controller to represent the Pods selected by Service objects.',
  {
    addressType: enumString(
      ['FQDN', 'IPv4', 'IPv6'],
      'addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type.',
    ),
    endpoints: list(Endpoint, 'endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.', {
      listType: 'atomic',
    }),
    ports: list(EndpointPort, 'ports specifies the list of network ports exposed by each endpoint in this slice.', { listType: 'atomic' }),
  },
);

export type Endpoint = Static<typeof Endpoint>;
export type EndpointSlice = Static<typeof EndpointSlice>;
