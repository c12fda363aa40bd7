// Validates Kubernetes objects (a JSON array on stdin) against the Kubernetes schemas, offline,
// with the kubernetes-models packages (ES modules only, so run as a script by
// deploy-manifests.test.ts). Prints one JSON array: per object, its kind/name and the error or null.
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';

const MODELS = {
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};

let input = '';
for await (const chunk of process.stdin) input += chunk;
const results = JSON.parse(input).map((object) => {
  const type = `${object.apiVersion}/${object.kind}`;
  const Model = MODELS[type];
  const name = `${type} ${object.metadata?.name}`;
  if (!Model) return { name, error: `no schema for ${type}` };
  try {
    new Model(object).validate();
    return { name, error: null };
  } catch (err) {
    return { name, error: String(err.message ?? err) };
  }
});
process.stdout.write(JSON.stringify(results));
