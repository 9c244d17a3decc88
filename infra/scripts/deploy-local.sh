#!/usr/bin/env bash
# `npm run deploy:local`: bootstrap and deploy the Stepforge stack into LocalStack with cdklocal
# (the aws-cdk-local package, a devDependency), writing the stack outputs where the e2e suite reads them.
set -euo pipefail
cd "$(dirname "$0")/../.."

export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-test}"
export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-test}"
export AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-us-east-1}"
export AWS_REGION="$AWS_DEFAULT_REGION"
export AWS_ENDPOINT_URL="${AWS_ENDPOINT_URL:-http://localhost:4566}"

if ! curl -fs "$AWS_ENDPOINT_URL/_localstack/health" >/dev/null; then
  echo "LocalStack is not reachable at $AWS_ENDPOINT_URL." >&2
  echo "Start it first: docker compose -f localstack-compose.yml up -d (see docs/deploy.md)" >&2
  exit 1
fi

mkdir -p .stepforge
npx cdklocal bootstrap "aws://000000000000/$AWS_DEFAULT_REGION"
# destroyOnRemoval: LocalStack is disposable. modelProvider=local: model steps use the deterministic
# offline provider (LocalStack has no Bedrock), so runs finish without credentials; allowOfflineModel=true
# says so on purpose (the app refuses to deploy the echo provider unasked).
npx cdklocal deploy --require-approval never -c allowOfflineModel=true \
  -c destroyOnRemoval=true -c modelProvider=local \
  --outputs-file .stepforge/localstack-outputs.json "$@"
echo "Outputs written to .stepforge/localstack-outputs.json; now: npm run test:localstack"
