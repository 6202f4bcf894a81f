//! Manifests from the Kubernetes documentation, served offline at the addresses tutorials use
//! (`kubectl apply -f https://k8s.io/examples/controllers/nginx-deployment.yaml`).
//!
//! The page works without a network, so the documentation's own examples are built in; any
//! other address gets the 404 kubectl would print.

/// `controllers/nginx-deployment.yaml` (Deployments concept page).
pub const NGINX_DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
  labels:
    app: nginx
spec:
  replicas: 3
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        ports:
        - containerPort: 80
";

/// `pods/simple-pod.yaml` (Pods concept page).
pub const SIMPLE_POD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: nginx
spec:
  containers:
  - name: nginx
    image: nginx:1.14.2
    ports:
    - containerPort: 80
";

/// `application/deployment.yaml` (Run a Stateless Application task).
pub const APPLICATION_DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
spec:
  selector:
    matchLabels:
      app: nginx
  replicas: 2 # tells deployment to run 2 pods matching the template
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        ports:
        - containerPort: 80
";

/// `controllers/frontend.yaml` (ReplicaSet concept page).
pub const FRONTEND_REPLICASET: &str = "apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: frontend
  labels:
    app: guestbook
    tier: frontend
spec:
  # modify replicas according to your case
  replicas: 3
  selector:
    matchLabels:
      tier: frontend
  template:
    metadata:
      labels:
        tier: frontend
    spec:
      containers:
      - name: php-redis
        image: us-docker.pkg.dev/google-samples/containers/gke/gb-frontend:v5
";

/// Every built-in example, by its path under `examples/`.
pub const EXAMPLES: &[(&str, &str)] = &[
    ("application/deployment.yaml", APPLICATION_DEPLOYMENT),
    ("controllers/frontend.yaml", FRONTEND_REPLICASET),
    ("controllers/nginx-deployment.yaml", NGINX_DEPLOYMENT),
    ("pods/simple-pod.yaml", SIMPLE_POD),
];

/// The example at a documentation address (`https://k8s.io/examples/...` or the raw GitHub
/// address of kubernetes/website's `content/en/examples/...`).
pub fn by_url(url: &str) -> Option<&'static str> {
    let path = ["https://k8s.io/examples/", "http://k8s.io/examples/", "https://kubernetes.io/examples/"]
        .iter()
        .find_map(|p| url.strip_prefix(p))
        .or_else(|| url.split_once("/content/en/examples/").map(|(_, p)| p))?;
    EXAMPLES.iter().find(|(p, _)| *p == path).map(|(_, text)| *text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documentation_addresses_resolve_offline() {
        assert_eq!(by_url("https://k8s.io/examples/controllers/nginx-deployment.yaml"), Some(NGINX_DEPLOYMENT));
        assert_eq!(
            by_url("https://raw.githubusercontent.com/kubernetes/website/main/content/en/examples/pods/simple-pod.yaml"),
            Some(SIMPLE_POD)
        );
        assert_eq!(by_url("https://example.com/x.yaml"), None);
    }
}
